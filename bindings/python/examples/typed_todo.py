"""A to-do list written as a typed Python program: declared classes, unmanaged objects added
to the realm, a backlink, queries, live results and their changes. The test command checks it
with `mypy --strict` and runs it; it prints what it finds and exits non-zero when something is
not as expected.

    python typed_todo.py [FILE]
"""
from __future__ import annotations

import sys
import tempfile
from typing import List, Optional

import cove


class Project(cove.Object):
    name: str = cove.Property(primary_key=True)
    tasks: cove.List["Task"]


class Task(cove.Object):
    title: str
    priority: int = 1
    done: bool = False
    projects = cove.LinkingObjects("Project", "tasks")


def main(path: Optional[str] = None) -> int:
    path = path or tempfile.mkdtemp() + "/todo.cove"
    durability: cove.Durability = "no_sync"
    with cove.open(path, schema=[Project, Task], schema_version=1, durability=durability) as realm:
        with realm.write():
            home = realm.create(Project, {"name": "home"})
            for title, priority in [("milk", 2), ("bank", 3), ("plants", 1)]:
                # An unmanaged Task, added: the same object is the realm's from then on.
                task: Task = realm.add(Task(title=title, priority=priority))
                home.tasks.append(task)
        urgent: cove.Results[Task] = realm.objects(Task).filter("priority >= $0", 2).sorted("title")
        seen: List[cove.CollectionChange] = []
        token = urgent.observe(seen.append)
        realm.deliver()
        titles: List[str] = [t.title for t in urgent]
        first: Optional[Task] = urgent.first
        first_title = first.title if first else None
        milk = realm.objects(Task).filter("title == 'milk'")[0]
        owners = len(milk.projects)
        in_home = [p.name for p in milk.projects.filter("name == 'home'")]
        with realm.write():
            milk.done = True
            realm.create(Task, {"title": "taxes", "priority": 5})
        realm.deliver()
        token.invalidate()
        version: int = cove.schema_version(path)
    print(f"urgent: {titles}, first {first_title}, milk in {owners} project(s) {in_home}")
    print(f"changes: {[(c.insertions, c.modifications) for c in seen[1:]]}, schema version {version}")
    ok = (titles == ["bank", "milk"] and owners == 1 and in_home == ["home"] and version == 1
          and seen[0].is_initial and seen[1].insertions == [2] and seen[1].modifications == [1])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
