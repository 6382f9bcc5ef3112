"""The viewer's reads of audits: progress, disagreements, items (``data.Reader`` mixes them in)."""

from __future__ import annotations

import json


class AuditReads:
    # -- audits --------------------------------------------------------------------------------
    def audits(self) -> list[dict]:
        if "audits" not in self.tables:
            return []
        checks = (
            " and i.item_id not in (select item_id from audit_checks c where c.audit = a.name)"
            if "audit_checks" in self.tables
            else ""
        )
        return self.dicts(
            "select name, task, source, created_at, (select count(*) from "
            f"audit_items i where i.audit = a.name{checks}) as items from audits a "
            "order by created_at, name"
        )

    def audit_closed(self, audit: str) -> bool:
        """Whether every annotator has labeled every item assigned to them (an imported audit,
        with no assignments, was labeled elsewhere: closed); an open audit, once nobody is
        working on it (an item held by someone who left is not waiting for them)."""
        if "audit_assignments" not in self.tables:
            return True
        if "audit_participants" in self.tables and self.one(
            "select exists (select 1 from audit_participants where audit = ?)", [audit]
        ):
            return not self.one(
                "select exists (select 1 from audit_participants where audit = ? and "
                "status = 'working')",
                [audit],
            )
        return not self.one(
            "select exists (select 1 from audit_assignments s where s.audit = ? and not exists "
            "(select 1 from audit_labels l where l.audit = s.audit and l.annotator = s.annotator "
            "and l.item_id = s.item_id))",
            [audit],
        )

    def audit_progress(self, audit: str) -> list[dict]:
        """Per person: role, items assigned, items labeled (never the token hash)."""
        return self.dicts(
            "select p.name as person, p.role, (select count(*) from audit_assignments s where "
            "s.audit = p.audit and s.annotator = p.name) as assigned, (select count(distinct "
            "l.item_id) from audit_labels l where l.audit = p.audit and l.annotator = p.name and "
            "l.role = p.role) as labeled from audit_annotators p where p.audit = ? order by "
            "p.role desc, p.name",
            [audit],
        )

    def audit_disagreements(self, audit: str) -> list[dict]:
        """Items where annotators' latest labels differ, or a human's differs from the reference."""
        latest: dict[str, dict[str, str]] = {}
        for item, person, label in self.rows(
            "select item_id, annotator, label from audit_labels where audit = ? and "
            "role = 'annotator' order by id",
            [audit],
        ):
            latest.setdefault(item, {})[person] = label
        refs = dict(
            self.rows("select item_id, label from audit_references where audit = ?", [audit])
        )
        out = []
        for item, labels in latest.items():
            humans = len(set(labels.values())) > 1
            vs_ref = item in refs and any(v != refs[item] for v in labels.values())
            if humans or vs_ref:
                out.append(
                    {
                        "item_id": item,
                        "labels": "; ".join(f"{p}: {v}" for p, v in sorted(labels.items())),
                        "reference": refs.get(item),
                        "annotators_differ": humans,
                        "differs_from_reference": vs_ref,
                    }
                )
        return out

    def audit_item(self, audit: str, item_id: str) -> dict | None:
        raw = self.one(
            "select payload from audit_items where audit = ? and item_id = ?", [audit, item_id]
        )
        return json.loads(raw) if raw else None
