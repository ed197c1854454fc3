"""The browser app of ``lama-dice serve``: play the agents, watch any record, read the results.

* :mod:`.state`: a game's table as JSON (what the page draws), a record's frames;
* :mod:`.games`: the games being played (one per id, agents move until it is the person's turn),
  kept in a bounded store that drops finished and abandoned games;
* :mod:`.results`: score cards and league / evaluate reports under ``--results`` as tables;
* :mod:`.app`: the FastAPI application (pages, JSON API, OpenAPI at ``/docs``);
* :mod:`.loadtest`: many concurrent games against a running server (``docs/performance.md``).

Only :mod:`.app` needs the ``web`` extra (FastAPI and uvicorn); the rest is plain Python over
the rules engine, so every rule still comes from :mod:`lama_env`.  See docs/web.md.
"""
