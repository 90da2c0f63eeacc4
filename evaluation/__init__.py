"""How the Evaluator scores a model: the forecast metrics and the eval config with the
blessing rule."""
