"""Which tests share an xdist worker (support.worker_groups)."""

from __future__ import annotations

from support.worker_groups import group_names


def test_a_module_is_a_group_and_the_users_of_an_engine_share_one() -> None:
    groups = group_names(
        {
            "a.py": {"tmp_path", "prefect_server"},
            "b.py": {"ray_session", "prefect_server"},
            "c.py": {"ray_session"},
            "d.py": {"dask_address"},
        }
    )
    # The Prefect server starts on each worker that needs it: a.py is a group of its own.
    assert groups == {
        "a.py": "a.py",
        "b.py": "engine:ray_session",
        "c.py": "engine:ray_session",
        "d.py": "engine:dask_address",
    }


def test_modules_linked_through_their_engines_share_one_group() -> None:
    # ray's users and dask's users meet in c.py: one worker starts both.
    groups = group_names(
        {"a.py": {"ray_session"}, "b.py": {"dask_address"}, "c.py": {"dask_address", "ray_session"}}
    )
    assert set(groups.values()) == {"engine:dask_address+ray_session"}
