"""The site agent: everything a hospital runs on its own machine."""
