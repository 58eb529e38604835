"""The "gbtree" logger: fits log their stages and rounds there (``verbosity``,
``log_period``) at INFO. While logging is not configured (the root logger has no
handler) the lines are printed to stdout, as before logging existed; configured
(``logging.basicConfig``, a handler of one's own, pytest's ``caplog``), they go
where it sends them, once."""
import logging
import sys

LOGGER = logging.getLogger("gbtree")


class _Console(logging.Handler):
    """A record's message on stdout, while the root logger has no handler."""

    def emit(self, record):
        if logging.getLogger().handlers:
            return
        try:
            sys.stdout.write(self.format(record) + "\n")
            sys.stdout.flush()
        except Exception:   # (logging's rule: a handler never raises)
            self.handleError(record)


if not any(isinstance(h, _Console) for h in LOGGER.handlers):
    LOGGER.addHandler(_Console())
if LOGGER.level == logging.NOTSET:   # (INFO gets through; a user's level stays)
    LOGGER.setLevel(logging.INFO)
