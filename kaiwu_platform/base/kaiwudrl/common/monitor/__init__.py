"""The platform's monitor panel configuration (`monitor_config_builder`), as 15.0.1 packages
import it."""
