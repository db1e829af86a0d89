"""``python -m sharnir``: the same as the ``sharnir`` command."""

import sys

from .app.cli import main

sys.exit(main())
