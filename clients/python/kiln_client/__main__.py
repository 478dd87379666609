# Entry point of `python3 -m kiln_client`; the commands live in cli.py.
"""python3 -m kiln_client"""

import sys

from .cli import main

sys.exit(main())
