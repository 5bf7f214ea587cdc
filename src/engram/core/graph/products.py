"""Products every reader knows by name: apps and platforms people use, devices, drinks,
snacks and branded goods, in their usual English forms.

The labelled sentences' guideline, and most readers, call an app, a drink or a branded
thing a ``product`` ("listens on Spotify", "learning on duolingo", "Stella Artois is his
favourite beer"), and the company behind it an ``organisation`` where the sentence
speaks of the company: who works for it, joins it or is hired by it, or what it has
("works at Spotify", "Spotify's CEO"). :mod:`engram.core.graph.entity_types` reads these
so; the organisations' list (:mod:`engram.core.graph.organisations`) holds none of them.
Normal forms (:func:`engram.core.graph.names.normalise`). Left out: the names that are
English words or people's names as often ("Slack", "Zoom", "Signal", "Switch", "Galaxy",
"Corona", "Dove", "Barbie", "Alexa"). Written from general knowledge, not read off any
labelled text.
"""

from __future__ import annotations

_ONE_WORD = """
spotify duolingo whatsapp instagram tiktok snapchat youtube facebook linkedin reddit
pinterest tumblr discord twitch tinder grindr strava canva figma dropbox venmo cashapp
zelle paypal gmail chatgpt shazam goodreads wattpad soundcloud deezer crunchyroll uber
airbnb deliveroo doordash grubhub instacart skype facetime imessage wechat viber bereal
trello asana evernote todoist headspace myfitnesspal peloton fitbit gopro iphone ipad
ipod macbook imac airpods playstation ps4 ps5 xbox gameboy kindle kobo thinkpad
chromebook roomba vespa prius thermomix nespresso vitamix walkman segway coke fanta
gatorade powerade lucozade irn-bru nutella oreo oreos doritos pringles cheetos kitkat
twix skittles haribo toblerone lindt marmite vegemite nesquik cheerios weetabix tabasco
budweiser peroni moretti tsingtao asahi kirin jägermeister jagermeister baileys smirnoff
bacardi jameson hennessy moët moet aperol campari kahlúa kahlua tanqueray patrón ray-ban
rolex casio tupperware post-it sharpie velcro band-aid kleenex vaseline nivea colgate
gillette listerine tylenol advil panadol nurofen ozempic viagra botox
"""
_WHOLE = """
google maps | google docs | google drive | apple watch | apple music | apple pay |
nintendo switch | game boy | instant pot | red bull | dr pepper | kit kat | ferrero rocher |
tim tams | stella artois | san miguel | johnnie walker | jack daniel | bombay sapphire |
grey goose | don julio | amazon prime | prime video | disney plus | microsoft teams |
microsoft word | google meet | uber eats | air jordan | air max | model 3 | land cruiser
"""
KNOWN = frozenset(_ONE_WORD.split()) | frozenset(
    " ".join(name.split()) for name in _WHOLE.split("|")
)
"""Every known product's normal form."""
# Read in lowercase too after a word that says one comes ("on duolingo", "ordered an
# uber"): the one-word names but those that are English words or letters as often ("his
# eye would twitch", "dry tinder", "the peloton"; capitalised, they are the app).
IN_LOWERCASE = frozenset(_ONE_WORD.split()) - frozenset(
    "coke kindle tinder discord twitch venmo peloton".split()
)
