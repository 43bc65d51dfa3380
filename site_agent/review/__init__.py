"""The release review: one self-contained local HTML page for the site's privacy officer.

``facts.py`` gathers what a bundle would release and what the audit found from the work dir;
``words.py`` says what each rule and filter protects against; ``nearest.py`` finds a dropped
note's nearest real note and the words they share; ``spend.py`` is where an evaluation
accountant adds its figures; ``page.py`` writes the HTML; ``build.py`` is ``site-agent
review``'s plain function. The page holds real notes: it is written in the work dir, outside
the outbox and every bundle, and never exported.
"""
