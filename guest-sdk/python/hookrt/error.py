"""`HookError`: a failure whose message is the delivery's error, as it is."""


class HookError(Exception):
    """Fails the delivery (or `configure`) with exactly this message.

    Any other exception fails it too, named by its type and where it was raised
    (`actions.requested: KeyError: 'command' (guard.py:14, in actions_requested)`).
    """
