"""sb.desktop: the sandbox's graphical desktop for computer-use agents (an
image with Xvfb and xdotool, such as scripts/build-desktop-image.sh's).

    await sb.desktop.start(width=1280, height=800)
    await sb.desktop.launch(["xterm"])
    await sb.desktop.type("echo hi\\n")
    png = await sb.desktop.screenshot()
"""

from typing import Any, Dict, List, Optional, Tuple, Union, cast
from urllib.parse import quote

from . import types as t
from ._http import ApiClient


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class Desktop:
    """Start, watch and drive the desktop: screenshots, mouse, keyboard, windows."""

    def __init__(self, api: ApiClient, path: str):
        self._api, self._path = api, path + "/desktop"

    async def start(self, *, width: Optional[int] = None, height: Optional[int] = None,
                    depth: Optional[int] = None) -> "t.DesktopStatus":
        """start starts the desktop and returns once its display accepts connections."""
        body = _drop_none({"width": width, "height": height, "depth": depth})
        return cast("t.DesktopStatus", await self._api.json("POST", self._path + "/start", json_body=body, long=True))

    async def stop(self) -> "t.DesktopStatus":
        return cast("t.DesktopStatus", await self._api.json("POST", self._path + "/stop"))

    async def status(self) -> "t.DesktopStatus":
        return cast("t.DesktopStatus", await self._api.json("GET", self._path + "/status"))

    async def screenshot(self, *, format: Optional[str] = None, quality: Optional[int] = None,
                         cursor: bool = False, region: Optional[Tuple[int, int, int, int]] = None) -> bytes:
        """screenshot returns PNG (or with format="jpeg", JPEG) bytes; region is (x, y, width, height)."""
        q: Dict[str, Any] = {"format": format, "quality": quality, "cursor": cursor or None}
        if region is not None:
            q.update(zip(("x", "y", "width", "height"), region))
        resp = await self._api.request("GET", self._path + "/screenshot", query=q)
        return resp.content

    async def cursor_position(self) -> "t.DesktopPoint":
        return cast("t.DesktopPoint", await self._api.json("GET", self._path + "/mouse"))

    async def move_mouse(self, x: int, y: int) -> "t.DesktopPoint":
        return cast("t.DesktopPoint", await self._api.json("POST", self._path + "/mouse/move", json_body={"x": x, "y": y}))

    async def click(self, x: Optional[int] = None, y: Optional[int] = None, *, button: Optional[str] = None,
                    double: bool = False) -> "t.DesktopPoint":
        """click clicks button ("left", "middle", "right") at x, y, or where the pointer is."""
        body = _drop_none({"x": x, "y": y, "button": button, "double": double or None})
        return cast("t.DesktopPoint", await self._api.json("POST", self._path + "/mouse/click", json_body=body))

    async def drag(self, from_xy: Tuple[int, int], to_xy: Tuple[int, int], *, button: Optional[str] = None) -> "t.DesktopPoint":
        body = _drop_none({"from": {"x": from_xy[0], "y": from_xy[1]}, "to": {"x": to_xy[0], "y": to_xy[1]},
                           "button": button})
        return cast("t.DesktopPoint", await self._api.json("POST", self._path + "/mouse/drag", json_body=body))

    async def scroll(self, direction: str, *, amount: Optional[int] = None, x: Optional[int] = None,
                     y: Optional[int] = None) -> "t.DesktopPoint":
        body = _drop_none({"direction": direction, "amount": amount, "x": x, "y": y})
        return cast("t.DesktopPoint", await self._api.json("POST", self._path + "/mouse/scroll", json_body=body))

    async def type(self, text: str, *, delay_ms: Optional[int] = None) -> None:
        """type types Unicode text on the focused window ("\\n" presses Return)."""
        await self._api.json("POST", self._path + "/keyboard/type", json_body=_drop_none({"text": text, "delayMs": delay_ms}))

    async def press(self, key: str) -> None:
        """press presses a key or chord: "Return", "ctrl+c", "alt+tab"."""
        await self._api.json("POST", self._path + "/keyboard/press", json_body={"key": key})

    async def windows(self) -> List["t.DesktopWindow"]:
        return cast(List["t.DesktopWindow"], await self._api.json("GET", self._path + "/windows"))

    async def focus(self, window_id: str) -> None:
        await self._api.json("POST", self._path + "/windows/" + quote(window_id, safe="") + "/focus")

    async def launch(self, cmd: Union[str, List[str]], *, env: Optional[Dict[str, str]] = None,
                     user: Optional[str] = None) -> "t.Process":
        """launch starts an application (argv, or a shell command) on the desktop in the background."""
        body: Dict[str, Any] = {"shell": cmd} if isinstance(cmd, str) else {"cmd": list(cmd)}
        return cast("t.Process", await self._api.json("POST", self._path + "/launch", json_body=_drop_none({**body, "env": env, "user": user})))

    async def view(self, *, public: bool = False, expires_in: Optional[int] = None) -> "t.DesktopView":
        """view exposes the noVNC page and returns its URL (private: token, or signed with expires_in seconds)."""
        body = _drop_none({"public": public or None, "expiresInSeconds": expires_in})
        return cast("t.DesktopView", await self._api.json("POST", self._path + "/view", json_body=body))
