"""The names of the window functions (the semantics, section 3.7) and what to say when one is used
where it cannot be; a leaf module, so that the expression translator can ask it."""
from __future__ import annotations

#: Calcite's group window functions in GROUP BY
GROUP_FUNCTIONS = ("TUMBLE", "HOP", "SESSION")
USAGE = {"TUMBLE": "TUMBLE(ROWTIME, size [, align])", "HOP": "HOP(ROWTIME, slide, size [, align])",
         "SESSION": "SESSION(ROWTIME, gap)"}
#: the auxiliary functions: which window column they read (0 start, 1 end, 2 time)
AUXILIARY = {f"{g}_{part}": (g, i) for g in GROUP_FUNCTIONS for i, part in enumerate(("START", "END", "ROWTIME"))}


def unknown_function(name: str) -> str | None:
    """A clearer message than "Unknown function" for a window function used where it cannot be."""
    if name in AUXILIARY:
        g = AUXILIARY[name][0]
        return f"{name} needs GROUP BY {g}(...) with the same arguments in the same query"
    if name in GROUP_FUNCTIONS or name == "CUMULATE":
        where = f"in GROUP BY ({USAGE[name]}) or " if name in USAGE else ""
        return (f"{name} is a window: use it {where}as a window table function in FROM "
                f"(TABLE({name}(TABLE s, DESCRIPTOR(ROWTIME), ...)))")
    if name == "DESCRIPTOR":
        return "DESCRIPTOR is only an argument of a window table function in FROM"
    return None
