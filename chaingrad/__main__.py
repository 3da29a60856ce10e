"""``python -m chaingrad`` runs the command line."""

import sys

from .cli import main

if __name__ == "__main__":  # not on import (the docs' API reference imports every module)
    sys.exit(main())
