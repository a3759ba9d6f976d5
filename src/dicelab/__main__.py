from dicelab.cli.entry import main

main()
