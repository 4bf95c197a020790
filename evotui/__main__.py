from evotui.cli import main

main()
