"""The annotation lab: the label store, its export, campaigns and the campaign server."""
