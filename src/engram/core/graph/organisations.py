"""Organisations every reader knows by name: large companies and brands, apps and
platforms, shops and chains, well-known universities, international bodies and sports
clubs, in their usual English forms.

A name no cue of :mod:`engram.core.graph.entity_types` types is read as an
``organisation`` when it is one of these ("Deloitte hired Ana", "she joined Spotify"),
where it would otherwise take a person's shape; a sentence's first word is read as a
name when it is one. Normal forms (:func:`engram.core.graph.names.normalise`). Left out:
the names that are English words, places or people's names as often ("Apple",
"Amazon", "Shell", "Orange", "Target", "Oracle", "Chase", "Zara", "Chelsea", "Tesla",
"Ford", "Dell", "Puma", "Visa", "Marvel", "Canon", "Kia"), which keep the cues of their
sentence. Written from general knowledge, not read off any labelled text.
"""

from __future__ import annotations

_ONE_WORD = """
google microsoft facebook netflix spotify samsung huawei xiaomi lenovo sony
toyota nissan hyundai volkswagen bmw audi porsche ferrari lamborghini renault
peugeot citroën citroen fiat volvo ikea starbucks walmart costco tesco
aldi lidl carrefour uber airbnb deloitte accenture infosys wipro tcs
siemens bosch nestlé nestle unilever adidas reebok boeing airbus ryanair easyjet
lufthansa qantas vodafone verizon nokia ericsson heineken carlsberg guinness coca-cola
pepsi pepsico nintendo ubisoft intel nvidia qualcomm cisco salesforce shopify twitter
youtube instagram tiktok whatsapp linkedin reddit wikipedia duolingo etsy ebay paypal
mastercard barclays hsbc santander citibank citigroup jpmorgan kpmg pwc mckinsey
bytedance tencent alibaba baidu softbank panasonic toshiba hitachi mitsubishi
nikon lego hasbro mattel disney pixar paramount hbo
bbc cnn nbc cbs abc reuters bloomberg unicef unesco nato fifa uefa nasa spacex
harvard stanford yale princeton mit ucla nyu caltech sorbonne oxfam greenpeace
arsenal juventus bayern tottenham everton barça
twitch discord snapchat pinterest tumblr patreon kickstarter substack github gitlab
dropbox figma canva strava tinder lyft deliveroo doordash grubhub instacart venmo revolut
monzo klarna hulu peloton fitbit garmin gopro logitech asus acer adobe sephora nordstrom
wayfair zalando asos shein temu aliexpress rakuten flipkart swiggy zomato glovo wolt
chipotle dunkin primark uniqlo waitrose asda ocado subaru mazda skoda opel lexus
purdue rutgers tsinghua insead interpol europol opec lakers celtics knicks
"""
_WHOLE = """
goldman sachs | morgan stanley | bank of america | wells fargo | general electric |
general motors | procter & gamble | johnson & johnson | ernst & young | mercedes-benz |
real madrid | manchester united | manchester city | bayern munich | paris saint-germain |
ac milan | inter milan | atlético madrid | borussia dortmund | ajax amsterdam |
red cross | world bank | united nations | european union | world health organization |
amnesty international | doctors without borders | médecins sans frontières |
british airways | air france | turkish airlines | singapore airlines | emirates airline |
deutsche bank | credit suisse | royal mail | marks & spencer | john lewis |
whole foods | home depot | best buy | burger king | pizza hut | taco bell | tim hortons |
krispy kreme | united airlines | american airlines | virgin atlantic | delta air lines |
land rover | rolls-royce | habitat for humanity | save the children | peace corps | red sox
"""
KNOWN = frozenset(_ONE_WORD.split()) | frozenset(
    " ".join(name.split()) for name in _WHOLE.split("|")
)
"""Every known organisation's normal form."""
# Read in lowercase too, as chat writes them ("watching netflix", "my cousin is at ucla"):
# the one-word names but those that are English words or letters as often ("his eye
# would twitch", "dry tinder"; capitalised, they are the app far more often).
IN_LOWERCASE = frozenset(_ONE_WORD.split()) - frozenset(
    """arsenal abc mit lego guinness bayern twitch discord tinder venmo peloton adobe
    chipotle""".split()
)
