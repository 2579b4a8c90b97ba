from vsperf.cli import main

main()
