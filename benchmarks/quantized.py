"""Quantised gradients: workloads 1 and 2 fit on float gradients and on quantised
ones, by gbtree (``grad_quant_bins``) and by LightGBM (``use_quantized_grad``).

    python -m benchmarks higgs-like-quantized [--repeat 3]
    python -m benchmarks regression-wide-quantized [--repeat 3]

The data and settings of the ``higgs-like`` and ``regression-wide`` workloads;
the quantised variants use ``runners.QUANT_BINS`` levels and take their leaf
values from the exact gradients (gbtree always, LightGBM with
``quant_train_renew_leaf``). The table is the core workloads' one, so the fit
time and the test score of each variant sit side by side.
"""
from run import WORKLOADS as CORE_WORKLOADS
from run import workload_compare

LIBS = "gbtree,gbtree-quantized,lightgbm,lightgbm-quantized"

WORKLOADS = {
    f"{name}-quantized": dict(CORE_WORKLOADS[name], libs=LIBS,
                              help=f"{name} on float and on quantised gradients "
                                   f"(gbtree and LightGBM)")
    for name in ("higgs-like", "regression-wide")
}


def run(name, args, bench):
    settings = dict(WORKLOADS[name])
    settings.update({key: getattr(args, key) for key in ("rows", "test_rows", "rounds", "leaves")
                     if getattr(args, key, None) is not None})
    header, table = workload_compare(bench, settings, args)
    return {"header": header, "table": table, "settings": settings}
