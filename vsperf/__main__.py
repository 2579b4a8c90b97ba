from vsperf.cli.entry import main

main()
