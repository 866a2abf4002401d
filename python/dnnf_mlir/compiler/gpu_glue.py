"""What the GPU targets' parts of the C glue share (``vulkan_glue.py``, ``opencl_glue.py``).

Each GPU runtime has the same shape (``dnnf_<api>_load`` / ``_run`` / ``_free``,
``_dispatch_count`` / ``_name`` / ``_times``, ``_device_name``), so ``model.c`` calls it
the same way: ``dnnf_load`` maps the weights file, hands it to the runtime's load (which
uploads them), then unmaps it; ``dnnf_run`` is the runtime's run (serialized inside, so
reentrant). The code needs no CPU feature, so ``dnnf_missing_cpu_features`` is always
NULL; it runs no thread of its own. ``model.h`` adds the dispatches and their times, and
the device's name (``DECLARATIONS``).
"""

from __future__ import annotations

from .c_glue import GlueParts

DECLARATIONS = (
    "",
    "/* The dispatches of a run, in order (DNNF_DISPATCHES), each one's kernel, and the GPU",
    "   milliseconds each took in the last run: the number written, 0 before the first run,",
    "   -1 when the device has no compute timestamps. */",
    "int dnnf_dispatch_count(const dnnf_model *model);",
    "const char *dnnf_dispatch_name(const dnnf_model *model, int dispatch);",
    "int dnnf_dispatch_times(const dnnf_model *model, double *ms, int capacity);",
    "/* The GPU device the model runs on. */",
    "const char *dnnf_device_name(const dnnf_model *model);",
)


def runtime_glue_parts(api: str, declarations: tuple, load_arguments: str, extra: tuple = ()) -> GlueParts:
    """``model.c``'s calls of the runtime whose functions are ``dnnf_<api>_...`` (its model
    in the field ``<api>``), after ``declarations`` (its header, the plan); its load
    takes ``load_arguments`` before the weights; ``extra``: model.h functions of its own."""
    def call(function: str, *arguments: str) -> str:
        return f"dnnf_{api}_{function}({', '.join(('model->' + api,) + arguments)})"

    return GlueParts(
        declarations=declarations,
        definitions=("const char *dnnf_missing_cpu_features(void) { return NULL; }", ""),
        fields=(f"dnnf_{api}_model *{api};",),
        load=(
            f"  int status = dnnf_{api}_load({load_arguments}, model->weights, model->bytes, &model->{api}, "
            "error_message,",
            "                              sizeof error_message);",
            f"  if (status != DNNF_{api.upper()}_OK) {{",
            "    dnnf_free(model);",
            "    return NULL;",
            "  }",
            "  if (model->bytes) munmap(model->weights, model->bytes); /* on the device now */",
            "  model->bytes = 0;",
        ),
        free=(f"  {call('free')};",),
        run=(f"  return {call('run', 'inputs', 'outputs', 'error_message', 'sizeof error_message')};",),
        extra=(
            "int dnnf_set_num_threads(int threads) { (void)threads; return 1; }",
            "",
            f"int dnnf_dispatch_count(const dnnf_model *model) {{ return {call('dispatch_count')}; }}",
            "",
            "const char *dnnf_dispatch_name(const dnnf_model *model, int dispatch) {",
            f"  return {call('dispatch_name', 'dispatch')};",
            "}",
            "",
            "int dnnf_dispatch_times(const dnnf_model *model, double *ms, int capacity) {",
            f"  return {call('dispatch_times', 'ms', 'capacity')};",
            "}",
            "",
            f"const char *dnnf_device_name(const dnnf_model *model) {{ return {call('device_name')}; }}",
            *extra,
        ),
    )


__all__ = ["DECLARATIONS", "runtime_glue_parts"]
