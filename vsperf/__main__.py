from vsperf.cli.main import main

main()
