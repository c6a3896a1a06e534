import sys

from trainspec.cli import main

sys.exit(main())
