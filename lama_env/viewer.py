"""The window of the envs' ``human`` render mode, or False where none can open (docs/environments.md, Pictures)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np


class HumanView:
    """A pygame window titled ``caption`` that shows pictures at most ``fps`` times a second (0 or None: no wait)."""

    _pygame: Any = None
    _screen: Any = None
    _clock: Any = None
    _failed = False

    def __init__(self, caption: str, fps: float | None = None) -> None:
        """Remember the title and pace; the window opens on the first :meth:`show`."""
        self.caption, self.fps = caption, fps

    @property
    def is_open(self) -> bool:
        """Whether the window is open."""
        return self._screen is not None

    def _open(self, width: int, height: int) -> bool:
        env = os.environ.get  # a window needs SDL_VIDEODRIVER set, or (on Linux/BSD) a display
        if self._failed or not (env("SDL_VIDEODRIVER") or sys.platform.startswith(("win", "darwin", "cygwin"))
                                or env("DISPLAY") or env("WAYLAND_DISPLAY")):
            self._failed = True
            return False
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        try:
            import pygame

            pygame.display.init()
            if not os.environ.get("SDL_VIDEODRIVER") and pygame.display.get_driver() in ("offscreen", "dummy"):
                pygame.display.quit()
                raise RuntimeError("no display")
            self._screen = pygame.display.set_mode((width, height))
            pygame.display.set_caption(self.caption)
        except Exception:  # no pygame, no display, or SDL failed: print text instead
            self._failed = True
            self._screen = None
            return False
        self._pygame = pygame
        self._clock = pygame.time.Clock()
        return True

    def show(self, frame: np.ndarray | Callable[[], np.ndarray]) -> bool:
        """Show ``frame`` (an ``(H, W, 3)`` uint8 array, or a function that draws it); False if no window can."""
        if self._failed:
            return False
        image = frame() if callable(frame) else frame
        h, w = image.shape[:2]
        if self._screen is None and not self._open(w, h):
            return False
        pygame = self._pygame
        if self._screen.get_size() != (w, h):
            self._screen = pygame.display.set_mode((w, h))
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(image.swapaxes(0, 1)))
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        if self.fps:
            self._clock.tick(self.fps)
        return True

    def close(self) -> None:
        """Close the window (a later :meth:`show` opens a new one)."""
        if self._screen is not None:
            self._pygame.display.quit()
        self._screen = None
        self._failed = False


__all__ = ["HumanView"]
