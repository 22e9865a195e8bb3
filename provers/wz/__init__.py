"""WZ: Zeilberger certificates, symbolic proofs of identities, Lean sketches."""
