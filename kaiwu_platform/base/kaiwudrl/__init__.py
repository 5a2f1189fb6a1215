"""The Kaiwu platform's `kaiwudrl` modules that a code package imports, as this toolkit provides
them: `CONFIG` and the state/action interface classes. The platform's own servers and scripts
(`kaiwudrl.server.*`, `kaiwudrl.common.utils.*`) are this toolkit's `./train.sh --package`."""
