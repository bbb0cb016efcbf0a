"""Speed measurement (``centrum bench``): synthetic pages, the press through the real extension, the API."""
