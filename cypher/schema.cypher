// Idempotent schema: safe to run on every start.
CREATE CONSTRAINT entity_identity IF NOT EXISTS
FOR (n:Entity) REQUIRE (n.user, n.id) IS UNIQUE;
CREATE CONSTRAINT conversation_identity IF NOT EXISTS
FOR (c:Conversation) REQUIRE (c.user, c.id) IS UNIQUE;
CREATE CONSTRAINT key_identity IF NOT EXISTS
FOR (k:Key) REQUIRE (k.user, k.id) IS UNIQUE;
CREATE CONSTRAINT owner_identity IF NOT EXISTS
FOR (o:Owner) REQUIRE o.user IS UNIQUE;
CREATE INDEX entity_by_user IF NOT EXISTS
FOR (n:Entity) ON (n.user);
CREATE INDEX key_by_ref IF NOT EXISTS
FOR (k:Key) ON (k.user, k.ref);
// Keys by the version of the owner's keys that wrote them: a copy held in memory
// catches up on those alone.
CREATE INDEX key_by_version IF NOT EXISTS
FOR (k:Key) ON (k.user, k.version);
CREATE VECTOR INDEX key_embedding IF NOT EXISTS
FOR (k:Key) ON k.embedding
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine'}};
// Claims' vectors apart from names': claim keys written before they had an index of
// their own are moved (nothing matches once they are).
MATCH (k:ClaimKey) WHERE k.embedding IS NOT NULL
SET k.claim_embedding = k.embedding
REMOVE k.embedding;
CREATE VECTOR INDEX claim_embedding IF NOT EXISTS
FOR (k:ClaimKey) ON k.claim_embedding
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine'}};
// Names and aliases, case-folded, each indexed whole (keyword analyzer): lookups
// by name go through this index instead of scanning the owner's nodes.
CREATE FULLTEXT INDEX entity_names IF NOT EXISTS
FOR (n:Entity) ON EACH [n.names_folded]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
// Claims by their words (names, relation and snippet), stemmed as English.
CREATE FULLTEXT INDEX claim_words IF NOT EXISTS
FOR (k:ClaimKey) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
// Wait for new indexes to come online before the first query uses them.
CALL db.awaitIndexes(300)
