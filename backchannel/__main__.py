from backchannel.cli.main import main

main()
