# ruff: noqa
import os
import lit.formats

config.name = "passflow"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]
config.environment["PATH"] = os.environ["PATH"]
config.environment["PYTHONHASHSEED"] = "0"
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "Inputs")))
