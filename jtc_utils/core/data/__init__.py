"""What an experiment reads: the real and a reader's text, the sources per profile, the samples and their positions,
the profiles, the setting a figure is computed under and the real vocabulary's concept classes. Built on ``infra``
and ``models``.
"""
