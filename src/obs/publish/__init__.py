"""Publishing and review: outputs read outside a browser tab (PR comments, one-file reports, GitHub
Pages), build-to-build changes and frozen reports. The decision ledger itself is core (`obs.ledger`):
discovery, adapters and the build read it; this package only writes it (`obs decide`).
"""
