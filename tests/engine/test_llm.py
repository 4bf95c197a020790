"""evotui.llm against a loopback fake Ollama, through the official client over real HTTP."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from evotui.llm import LLMError, LLMReply, OllamaLLM, ServerStatus, has_model, probe
from tests.fake_ollama import FakeOllama, Reply, closed_port_url, fake_embedding

pytestmark = pytest.mark.timeout(30)

MODEL = "qwen2.5-coder:7b"
MESSAGES = [{"role": "system", "content": "You write Triton."}, {"role": "user", "content": "go"}]


def run(coro):
    return asyncio.run(coro)


def chat(llm: OllamaLLM, chunks: list[str] | None = None) -> LLMReply:
    return run(llm.chat(MESSAGES, on_chunk=None if chunks is None else chunks.append))


def fast(fake: FakeOllama, **kw) -> OllamaLLM:
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 5.0)
    return OllamaLLM(MODEL, host=fake.url, **kw)


TEXT = "Here is the kernel:\n```python\nclass ModelNew:\n    pass\n```\nDone, it should be faster."


def test_streaming_chunks_arrive_in_order_and_tokens_come_from_final_chunk(fake_ollama):
    fake_ollama.script(Reply(TEXT, prompt_eval_count=321, eval_count=77))
    llm = fast(fake_ollama, options={"temperature": 0.2, "num_ctx": 8192})
    chunks: list[str] = []
    reply = chat(llm, chunks)

    assert reply.text == TEXT
    assert len(chunks) > 5 and "".join(chunks) == TEXT  # many irregular pieces, in order
    assert (reply.prompt_tokens, reply.completion_tokens) == (321, 77)
    assert reply.model == MODEL and reply.done_reason == "stop" and reply.seconds > 0
    assert llm.stats.as_dict() == {
        "calls": 1,
        "failures": 0,
        "retries": 0,
        "prompt_tokens": 321,
        "completion_tokens": 77,
        "seconds": pytest.approx(llm.stats.seconds),
    }
    (req,) = fake_ollama.requests_to("/api/chat")
    assert req.body["model"] == MODEL and req.body["stream"] is True
    assert req.body["messages"] == MESSAGES
    assert req.body["options"] == {"temperature": 0.2, "num_ctx": 8192}


def test_thinking_is_streamed_to_the_callback_but_kept_out_of_the_text(fake_ollama):
    fake_ollama.script(Reply("final answer", thinking="let me think about tiles"))
    chunks: list[str] = []
    reply = chat(fast(fake_ollama), chunks)
    assert reply.text == "final answer"
    assert reply.thinking == "let me think about tiles"
    assert "".join(chunks) == "<think>let me think about tiles</think>\nfinal answer"


def test_midstream_error_is_retried_then_succeeds_and_is_counted(fake_ollama):
    fake_ollama.script(
        Reply("a broken first try " * 4, fault="error_midstream"), "second try works"
    )
    llm = fast(fake_ollama)
    chunks: list[str] = []
    reply = chat(llm, chunks)

    assert reply.text == "second try works"
    assert len(fake_ollama.requests_to("/api/chat")) == 2
    assert llm.stats.retries == 1 and llm.stats.failures == 0 and llm.stats.calls == 1
    streamed = "".join(chunks)
    assert "[retry 1/2: stream_error" in streamed and streamed.endswith("second try works")


def test_persistent_midstream_error_raises_stream_error_after_all_retries(fake_ollama):
    fake_ollama.script(*[Reply("never finishes " * 3, fault="error_midstream") for _ in range(3)])
    llm = fast(fake_ollama, retries=2)
    with pytest.raises(LLMError) as info:
        chat(llm)
    err = info.value
    assert err.kind == "stream_error" and err.attempts == 3
    assert "llama runner process has terminated" in str(err) and "after 3 attempts" in str(err)
    assert len(fake_ollama.requests_to("/api/chat")) == 3
    assert llm.stats.failures == 1 and llm.stats.retries == 2


def test_http_500_is_retried(fake_ollama):
    fake_ollama.script(Reply("x", fault="http_500"), "ok now")
    llm = fast(fake_ollama)
    assert chat(llm).text == "ok now"
    assert llm.stats.retries == 1


def test_backoff_grows_exponentially(fake_ollama):
    fake_ollama.script(*[Reply("x", fault="http_500") for _ in range(3)])
    llm = fast(fake_ollama, retries=2, backoff=0.2)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(llm)
    assert info.value.kind == "http_error" and info.value.status_code == 500
    assert 0.6 <= time.monotonic() - t0 < 3.0  # 0.2 + 0.4 of sleeping


def test_server_down_fails_fast_with_a_fix(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    url = closed_port_url()
    llm = OllamaLLM(MODEL, host=url, retries=2, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(llm)
    assert time.monotonic() - t0 < 2.0
    assert info.value.kind == "server_down"
    assert "ollama serve" in str(info.value) and url in str(info.value)
    assert llm.stats.failures == 1


def test_unknown_model_is_model_missing_with_pull_hint_and_no_retries(fake_ollama):
    llm = OllamaLLM("deepseek-r1:1.5b", host=fake_ollama.url, retries=3, backoff=0.5)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(llm)
    assert time.monotonic() - t0 < 0.5  # no backoff sleeps
    assert info.value.kind == "model_missing"
    assert "`ollama pull deepseek-r1:1.5b`" in str(info.value)
    assert len(fake_ollama.requests_to("/api/chat")) == 1
    assert llm.stats.retries == 0 and llm.stats.failures == 1


def test_hang_times_out_within_the_configured_timeout(fake_ollama):
    fake_ollama.script(Reply("late", fault="hang", hang_seconds=20))
    llm = fast(fake_ollama, timeout=0.5, retries=0)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(llm)
    assert 0.4 < time.monotonic() - t0 < 1.5
    assert info.value.kind == "timeout" and "0.5 s" in str(info.value)


def test_timeout_is_per_attempt_and_retried(fake_ollama):
    fake_ollama.script(Reply("late", fault="hang", hang_seconds=20), "in time")
    llm = fast(fake_ollama, timeout=0.5, retries=1)
    assert chat(llm).text == "in time"
    assert llm.stats.retries == 1


def test_slow_stream_that_exceeds_the_timeout_is_a_timeout(fake_ollama):
    fake_ollama.script(Reply("word " * 40, fault="slow", delay=0.05))
    chunks: list[str] = []
    with pytest.raises(LLMError) as info:
        chat(fast(fake_ollama, timeout=0.4, retries=0), chunks)
    assert info.value.kind == "timeout"
    assert chunks  # what had arrived was shown


def test_slow_stream_within_the_timeout_succeeds(fake_ollama):
    fake_ollama.script(Reply("tick tock " * 3, fault="slow", delay=0.01))
    assert chat(fast(fake_ollama)).text == "tick tock " * 3


def test_empty_reply_is_an_error_naming_the_thinking(fake_ollama):
    fake_ollama.script(Reply("", thinking="I will now think forever", done_reason="length"))
    with pytest.raises(LLMError) as info:
        chat(fast(fake_ollama))
    assert info.value.kind == "empty_reply"
    assert "thinking" in str(info.value) and "length" in str(info.value)
    assert len(fake_ollama.requests_to("/api/chat")) == 1  # not retried


def test_ollama_host_env_is_honoured_and_explicit_host_wins(fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.script("via env")
    assert chat(OllamaLLM(MODEL)).text == "via env"

    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    fake_ollama.script("via explicit host")
    assert chat(OllamaLLM(MODEL, host=fake_ollama.url)).text == "via explicit host"


def test_default_reply_generator_sees_the_request(fake_ollama):
    fake_ollama.default = lambda req: "echo: " + req["messages"][-1]["content"]
    assert chat(fast(fake_ollama)).text == "echo: go"


def test_embed_returns_one_deterministic_vector_per_text(fake_ollama):
    llm = fast(fake_ollama)
    vectors = run(llm.embed(["use tl.max", "mask the tail"], "nomic-embed-text"))
    assert vectors == [fake_embedding("use tl.max"), fake_embedding("mask the tail")]
    (req,) = fake_ollama.requests_to("/api/embed")
    assert req.body == {"model": "nomic-embed-text", "input": ["use tl.max", "mask the tail"]}


def test_embed_with_missing_model_names_the_embedding_model(fake_ollama):
    with pytest.raises(LLMError) as info:
        run(fast(fake_ollama).embed(["x"], "all-minilm"))
    assert info.value.kind == "model_missing" and "`ollama pull all-minilm`" in str(info.value)


def test_one_instance_works_across_event_loops(fake_ollama):
    llm = fast(fake_ollama)
    fake_ollama.script("one", "two")
    assert chat(llm).text == "one"
    assert chat(llm).text == "two"  # a second asyncio.run: a fresh loop
    assert llm.stats.calls == 2


def test_probe_lists_models_and_has_model_handles_latest(fake_ollama):
    status = run(probe(fake_ollama.url))
    assert status.reachable and status.error is None
    assert status.models == ("qwen2.5-coder:7b", "nomic-embed-text:latest")
    assert has_model(status, "nomic-embed-text")
    assert has_model(status, "nomic-embed-text:latest")
    assert has_model(status, "qwen2.5-coder:7b")
    assert not has_model(status, "qwen2.5-coder")  # means :latest, which is not there
    assert not has_model(ServerStatus(True, ("llama3",), None), "llama3:8b")
    assert has_model(ServerStatus(True, ("llama3",), None), "llama3:latest")


def test_probe_of_a_closed_port_says_how_to_start_ollama():
    t0 = time.monotonic()
    status = run(probe(closed_port_url(), timeout=2.0))
    assert time.monotonic() - t0 < 2.0
    assert not status.reachable and status.models == ()
    assert "ollama serve" in status.error


def test_a_malformed_server_address_is_a_clear_error_not_a_traceback(tmp_path):
    """`--ollama-host http://127.0.0.1:abc`, or the same in OLLAMA_HOST (which the client
    parses as it is imported): the probe says the address is not valid."""
    status = run(probe("http://127.0.0.1:abc", timeout=2.0))
    assert not status.reachable and "is not a valid Ollama server address" in status.error
    code = ("import asyncio, evotui.llm as m; s = asyncio.run(m.probe(None, timeout=2.0)); "
            "print(s.reachable, s.error)")
    env = {**os.environ, "OLLAMA_HOST": "http://127.0.0.1:abc"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "False OLLAMA_HOST='http://127.0.0.1:abc' is not a valid server address" in p.stdout


def test_a_web_server_that_is_not_ollama_is_named_so(tmp_path):
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        status = run(probe(f"http://127.0.0.1:{server.server_address[1]}", timeout=3.0))
    finally:
        server.shutdown()
    assert not status.reachable
    assert "does not answer Ollama's API" in status.error and "MODEL" not in status.error


def test_llm_module_does_not_import_textual():
    code = "import sys, evotui.llm; sys.exit('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
