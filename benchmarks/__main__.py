"""``python -m benchmarks WORKLOAD ...`` from the repository root: the same as
``python benchmarks/run.py WORKLOAD ...``."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

common.use_checkout_build()     # never the unbuilt source folder that -m put first
import run  # noqa: E402

sys.exit(run.main())
