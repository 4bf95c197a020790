from tests.fake_ollama import fake_ollama  # noqa: F401
