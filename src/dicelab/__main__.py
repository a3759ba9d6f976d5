from dicelab.cli.main import main

main()
