from evotui.cli.main import main

main()
