"""``python -m coiter``: the command-line tool (coiter.cli, docs/cli.md)."""

import sys

from .cli import main

sys.exit(main())
