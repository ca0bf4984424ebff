"""Lambda platform facts shared by the layer build (scripts/build_layer.py) and the stack; no CDK imports."""

PYTHON_VERSION = "3.12"
LAMBDA_ARCHITECTURE = "x86_64"
