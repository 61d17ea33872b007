"""Cypher statements of the Neo4j store, shipped as package data (pegasus.cypher)."""
