"""The graph API's one error type, apart so the API's helper modules can raise it too."""


class GraphAPIError(ValueError):
    """A bad argument; the message goes back to the program as its error."""
