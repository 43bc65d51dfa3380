"""Shipped label mappings (TOML); load one by name with ``load_label_mapping(name)``."""
