"""A factory module for the invalid-spec corpus: specs there that name a custom model find it, so that each spec
shows only the problem it is about."""


def make(input_shape, num_outputs, width=8):
    raise NotImplementedError("the corpus is only validated, never run")


def images(**kwargs):
    raise NotImplementedError("the corpus is only validated, never run")
