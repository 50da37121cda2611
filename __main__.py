"""``python -m warpgraph``: the same command line as the ``warpgraph`` script."""
from warpgraph.cli.main import main

if __name__ == "__main__":
    main()
