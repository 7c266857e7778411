from backchannel.config.paths import Paths, resolve_paths
from backchannel.config.secrets import read_secret
from backchannel.config.settings import ConfigError, Settings, load_settings

__all__ = ["ConfigError", "Paths", "Settings", "load_settings", "read_secret", "resolve_paths"]
