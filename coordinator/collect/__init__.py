"""Phase 2, collect: every site sends its signed export bundle (``phase``); each one is
verified with the site's registered key before anything is trained on it (``verify``)."""
