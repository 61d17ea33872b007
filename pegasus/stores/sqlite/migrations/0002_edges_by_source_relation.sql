-- The write path looks up a source's claims of one relation: on the user's
-- own node (a quarter of all edges) the source index alone read them all.
CREATE INDEX edges_by_source_relation ON edges (user, source, relation);
DROP INDEX edges_by_source;
