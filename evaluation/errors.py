"""The one exception type the package raises for problems a user can fix."""


class EvaluationError(Exception):
    """Bad input or setup (a data file in the wrong shape, a missing model, ...).

    The message names what is wrong and where; the command line prints it without a traceback.
    """
