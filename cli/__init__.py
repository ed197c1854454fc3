"""The ``lama-dice`` command line.

The parser (:mod:`.main`), one module per subcommand (:mod:`.commands`), the terminal game
(:mod:`.play`, :mod:`.tui`), learning curves (:mod:`.curves`) and record files (:mod:`.recordfile`).
"""
