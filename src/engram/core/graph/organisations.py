"""Organisations every reader knows by name: large companies and brands, shops and
chains, well-known universities, international bodies and sports clubs, in their usual
English forms; apps and platforms are :mod:`engram.core.graph.products`' (an
organisation there only where the sentence speaks of the company).

A name no cue of :mod:`engram.core.graph.entity_types` types is read as an
``organisation`` when it is one of these ("Deloitte hired Ana", "she joined Google"),
where it would otherwise take a person's shape; a sentence's first word is read as a
name when it is one. Normal forms (:func:`engram.core.graph.names.normalise`). Left out:
the names that are English words, places or people's names as often ("Apple",
"Amazon", "Shell", "Orange", "Target", "Oracle", "Chase", "Zara", "Chelsea", "Tesla",
"Ford", "Dell", "Puma", "Visa", "Marvel", "Canon", "Kia"), which keep the cues of their
sentence and the words of their trade (:data:`TRADES`). Written from general knowledge,
not read off any labelled text.
"""

from __future__ import annotations

import re

_ONE_WORD = """
google microsoft netflix samsung huawei xiaomi lenovo sony toyota nissan hyundai
volkswagen bmw audi porsche ferrari lamborghini renault peugeot citroën citroen fiat
volvo ikea starbucks walmart costco tesco aldi lidl carrefour deloitte accenture infosys
wipro tcs siemens bosch nestlé nestle unilever adidas reebok boeing airbus ryanair
easyjet lufthansa qantas vodafone verizon nokia ericsson heineken carlsberg guinness
coca-cola pepsi pepsico nintendo ubisoft intel nvidia qualcomm cisco salesforce shopify
twitter wikipedia etsy ebay mastercard barclays hsbc santander citibank citigroup
jpmorgan kpmg pwc mckinsey bytedance tencent alibaba baidu softbank panasonic toshiba
hitachi mitsubishi nikon lego hasbro mattel disney pixar paramount hbo bbc cnn nbc cbs
abc reuters bloomberg unicef unesco nato fifa uefa nasa spacex harvard stanford yale
princeton mit ucla nyu caltech sorbonne oxfam greenpeace arsenal juventus bayern
tottenham everton barça patreon kickstarter substack github gitlab lyft revolut monzo
klarna hulu garmin logitech asus acer adobe sephora nordstrom wayfair zalando asos shein
temu aliexpress rakuten flipkart swiggy zomato glovo wolt chipotle dunkin primark uniqlo
waitrose asda ocado subaru mazda skoda opel lexus purdue rutgers tsinghua insead
interpol europol opec lakers celtics knicks
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
# More of them, by field (technology, fashion and retail, food chains, banks and insurers,
# pharmaceuticals, energy and industry, logistics, consulting, news and broadcasting,
# games and music, bands, sports clubs, universities, public bodies), written from general
# knowledge, then checked: every one that is a lowercase word of Debian's English word
# lists, a given name, a place or a people every reader knows left out, and by hand
# those named after a town ("Burnley", "Sabadell"), a person as often ("Lowe's",
# "Costa", "Nielsen"), or letters chat uses otherwise ("cos", "otp", "msc", "cvs").
_MORE_ONE_WORD = """
oneplus oppo realme motorola htc ibm vmware atlassian airtable hubspot zendesk mailchimp
squarespace wix godaddy cloudflare akamai transferwise n26 coinbase binance openai
deepmind mozilla duckduckgo aol yandex naver kakao expedia booking.com gojek careem
justeat ubereats postmates getir talabat jumia konga paystack flutterwave mpesa m-pesa
safaricom airtel jio tata mahindra capgemini atos sopra dassault safran michelin danone
l'oréal loreal lvmh kering hermès hermes chanel dior gucci prada armani versace burberry
balenciaga givenchy fendi moncler benetton bershka pull&bear stradivarius h&m arket muji
lululemon northface skechers asics mizuno fila umbro diadora underarmour birkenstock
clarks levis lacoste topshop sainsburys morrisons co-op superdrug argos currys greggs
pret wagamama nandos itsu yo!sushi pizzaexpress dishoom gbk in-n-out chick-fil-a popeyes
kfc mcdonalds papajohns auchan leclerc intermarché intermarche monoprix rewe edeka
kaufland netto rossmann mercadona eroski fnac darty kroger safeway traderjoes publix
wegmans h-e-b albertsons walgreens jcpenney kmart marshalls homegoods menards petco
petsmart gamestop waterstones foyles whsmith woolworths bunnings pak'nsave loblaws
sobeys shoprite amex pnc bmo rbc scotiabank cibc desjardins natwest lloyds tsb rabobank
commerzbank unicredit intesa bbva caixabank nordea danske swedbank handelsbanken dnb ubs
raiffeisen erste pko mbank itaú itau bradesco nubank banorte mercadolibre icici hdfc sbi
kotak paytm phonepe gpay gtbank uba ecobank kcb absa fnb nedbank capitec blackrock
schwab etrade e-trade morningstar s&p fitch allianz axa generali aig metlife geico
allstate hiscox pfizer moderna astrazeneca biontech novartis roche sanofi gsk
glaxosmithkline merck abbvie amgen gilead takeda teva medtronic philips exxon exxonmobil
totalenergies eni equinor petrobras aramco gazprom rosneft lukoil sinopec petrochina
orsted ørsted iberdrola enel edf engie e.on rwe vattenfall ovo deere komatsu abb
honeywell dupont dow basf bayer raytheon embraer maersk dhl fedex usps evri dpd gls bain
bcg kearney gartner forrester ipsos yougov wpp omnicom publicis ogilvy saatchi nytimes
wsj afp aljazeera itv rté cbc sbs nhk kbs tvn zdf ard tve rtl canal+ npr pbs foxnews
msnbc espn starz funimation lionsgate a24 activision bungie capcom sega bandai konami
fromsoftware mojang supercell rovio zynga roblox ticketmaster eventbrite bandcamp celtic
hibs hibernian westham barca villarreal atletico atlético psg juve fiorentina atalanta
bvb schalke benfica ajax psv feyenoord galatasaray fenerbahçe fenerbahce besiktas
beşiktaş olympiacos panathinaikos flamengo palmeiras zamalek yankees mets steelers 49ers
canadiens springboks ucl lse kcl epfl sciencespo hec essec bocconi esade iese lmu
charité charite karolinska mcgill ubc utoronto uoft unsw usyd unimelb monash nus ntu
kaist postech snu yonsei todai keio waseda pku fudan sjtu zju hku cuhk hkust iit iits
iisc iim jnu unilag unn oau makerere uct cornell upenn wharton uchicago ucsd usc jhu cmu
gatech umich unc vanderbilt imf wto oecd unhcr undp unep wfp ilo iaea icrc msf usaid
fema fbi cia nsa irs dea atf cdc fda nih nhs dvla hmrc ofsted ofcom bafta ioc fia nba
nfl mlb nhl mls wnba pga atp wta icc ecb bundesbank coldplay radiohead metallica aerosmith
slipknot blackpink gorillaz paramore evanescence nickelback weezer rammstein megadeth abba
npower comcast xfinity giffgaff talktalk plusnet rspca nspcc barnardo wwf wetherspoons
barclaycard parcelforce meijer wickes homebase screwfix boohoo brentford fulham domino
"""
_MORE_WHOLE = """
just eat | north face | new balance | under armour | dr martens | tommy hilfiger |
calvin klein | ralph lauren | hugo boss | franco manca | five guys | shake shack | papa
john | little caesars | caffè nero | caffe nero | blue bottle | pret a manger | dutch
bros | albert heijn | el corte inglés | el corte ingles | leroy merlin | trader joe |
rite aid | tj maxx | dollar tree | big lots | ace hardware | barnes & noble | big w | jb
hi fi | harvey norman | shoppers drug mart | canadian tire | pick n pay | american
express | capital one | metro bank | abn amro | bnp paribas | société générale | societe
generale | crédit agricole | credit agricole | julius baer | mercado pago | mercado
libre | zenith bank | access bank | first bank | equity bank | standard bank | charles
schwab | munich re | swiss re | state farm | direct line | eli lilly | novo nordisk |
siemens healthineers | saudi aramco | octopus energy | john deere | schneider electric |
lockheed martin | northrop grumman | bae systems | cma cgm | hapag lloyd | boston
consulting group | oliver wyman | new york times | wall street journal | financial times
| associated press | al jazeera | sky news | channel 4 | france 24 | deutsche welle |
warner bros | sony pictures | electronic arts | epic games | riot games | square enix |
cd projekt | naughty dog | live nation | aston villa | crystal palace | west ham |
nottingham forest | sheffield united | real betis | athletic bilbao | rb leipzig | river
plate | al ahly | kaizer chiefs | orlando pirates | mamelodi sundowns | maple leafs |
all blacks | oxford university | cambridge university | tu delft | ku leuven | sciences
po | ie business school | mcgill university | korea university | kyoto university |
peking university | bits pilani | uc berkeley | johns hopkins | carnegie mellon |
georgia tech | ut austin | british gas | scottish power | severn trent | southern water |
thames water | anglian water | united utilities | virgin media | cancer research uk |
british heart foundation | daily mail | evening standard | washington post | new york
post | usa today | leeds united | newcastle united | costa coffee | lloyds bank | first
direct | sam's club | old navy | river island | t-mobile
"""
# The words inside an organisation's name that say it is one: "University of Porto",
# "Lumen Labs", "Halden FC".
WORDS = frozenset(
    """inc inc. ltd ltd. llc plc corp corp. corporation co company companies group labs lab
    university college school academy institute bank hospital clinic foundation club
    association society agency studio studios records airlines airways motors industries
    technologies systems solutions partners ventures capital church council ministry
    department fc team network media press gallery museum charity league""".split()
)
# A trade's or an ensemble's word that ends a business's name ("Oyelaran Textiles",
# "Brisk Couriers", "Thornbury Players", "Hollins Bakery", "Ferncliff Heating", a paper's
# "Marsden Chronicle"), by trade: shops, building and the home, health, schools,
# transport, papers, music; after a given name every reader knows, a surname's ("Ana
# Finance" is read by her cues). Left out: words a thing or a place is named by as often
# ("Machine Learning", "Computer Hardware", "Customer Service", "Sydney Opera House", the
# "Fifth Symphony", the "Hallelujah Chorus", an "Amazon Echo", a "London Borough").
TRADE_WORDS = frozenset(
    """textiles maritime scaffolding apparel aerospace automotive chemicals mining
    packaging plastics furniture cosmetics beverages distillery dairy bakeries properties
    lettings realty hotels resorts cinemas pharmacy opticians veterinary haulage freight
    couriers transport cleaning printing marketing advertising communications
    consultancy recruitment accountants solicitors finance financial investments
    securities assurance mutual payments tech technology networks computing engineering
    manufacturing machinery equipment electric renewables players singers chorale
    ensemble philharmonic quartet harriers
    bakery butchers grocers florists greengrocers fishmongers kitchens interiors
    flooring carpets timber autos coaches taxis cabs cleaners heating dentistry chemists
    housing estates developments surveyors engineers contractors electricals
    supermarkets traders wholesale wholesalers imports brewing vineyards cellars
    roasters creamery dairies nurseries jewellers jewelers barbers footwear fabrics
    aviation ferries cargo chronicle telegraph courier observer inquirer philharmonia
    recordings pictures hospice therapeutics diagnostics optics audiology physiotherapy
    chiropractic osteopathy tutors tutoring montessori conservatoire rfc afc""".split()
)
# Other languages' words for a company, a bank, a group or a publisher, and their legal
# forms: "Deutsche Bahn", "Banco Sabadell", "Grupo Modelo", "Siemens GmbH"; after a given
# name every reader knows, a surname's ("Maria Banco").
OTHER_LANGUAGES = frozenset(
    """deutsche banca banco banque caixa compagnie société societe groupe grupo gruppo
    éditions editions ediciones editorial editora verlag gmbh srl sarl oyj pty pvt
    bhd""".split()
)
# More words that end an organisation's name ("Octopus Energy", "Warner Bros", "the
# Washington Post", "Labour Party", "Calloway Health", a club's "Halden United", a
# utility's or a carrier's "Thames Water", "British Gas", "Network Rail"), which in
# a question ask for something else ("what games", "which party"): names only
# (:mod:`engram.core.asked` reads :data:`WORDS`).
NAMING_WORDS = (
    WORDS
    | frozenset(
        """holdings brewery pharma pharmaceuticals energy telecom insurance logistics
    consulting software games entertainment productions publishing publishers brothers
    bros trust federation commission authority committee party orchestra choir collective
    cooperative polytechnic conservatory observatory fund guild army navy police embassy
    consulate parliament times post herald tribune journal gazette news radio magazine
    healthcare analytics robotics electronics enterprises health mobile bio biotech foods
    digital creative interactive organics supplies farms
    shipping airline united rovers athletic wanderers albion hotspur primary elementary
    secondary design designs architects associates legal construction builders travel
    fitness dental accounting catering plumbing electrical roofing landscaping removals
    joinery glazing water gas power rail railway railways buses utilities broadband
    telecoms""".split()
    )
    | TRADE_WORDS
    | OTHER_LANGUAGES
)
AS_SURNAMES = TRADE_WORDS | OTHER_LANGUAGES
"""The words of a business's name read as a surname after a given name every reader
knows."""
_LISTED = frozenset((_ONE_WORD + _MORE_ONE_WORD).split()) | frozenset(
    " ".join(name.split()) for name in (_WHOLE + "|" + _MORE_WHOLE).split("|")
)
# A hyphenated name is written with a space as often ("rolls royce", "coca cola"), where
# its parts are words of their own (not "chick fil a", "co op").
KNOWN = _LISTED | frozenset(
    spaced
    for spaced in (name.replace("-", " ") for name in _LISTED if "-" in name)
    if min(map(len, spaced.split())) > 2
)
"""Every known organisation's normal form."""
# Read in lowercase too, as chat writes them ("watching netflix", "my cousin is at ucla"):
# the one-word names but those that are English words or letters as often ("a gunner's
# arsenal", "a lego brick"; capitalised, they are the organisation far more often).
IN_LOWERCASE = frozenset((_ONE_WORD + _MORE_ONE_WORD).split()) - frozenset(
    """arsenal abc mit lego guinness bayern adobe chipotle domino""".split()
)

# The organisations left out above because their name is as often an English word, a
# place or a person's ("Chase", "Orange", "Shell", "Amazon", "Labour"), with the words of
# their trade: one is the organisation where its text speaks of that trade ("Chase sent a
# letter about my overdraft", "Orange cut the mobile signal", "Labour won two seats").
# Written from general knowledge, each trade's words those its customers, voters or
# viewers use of it and few sentences about anything else hold.
_TRADES = {
    "bank": """bank banks banking account accounts overdraft loan loans mortgage mortgages
        savings deposit deposits withdrawal atm cheque cheques branch branches""",
    "payments": """payment payments card cards contactless transaction transactions""",
    "telecom": """signal network mobile broadband sim roaming coverage outage router wifi
        wi-fi 4g 5g contract tariff""",
    "broadcast": """tv channel channels broadcast broadcasts broadcasting subscription
        satellite dish rugby football cricket golf f1 premier sports""",
    "shop": """parcel parcels package packages order orders ordered delivery deliveries
        delivered shipping shipped refund refunds returns checkout basket""",
    "fuel": """petrol fuel diesel oil refinery drilling pump forecourt""",
    "cars": """car cars dealership dealer recall recalled ev electric suv truck trucks
        engine""",
    "computers": """laptop laptops computer computers pc software database server
        servers cloud printer printers iphone ipad macbook""",
    "cameras": """camera cameras lens lenses printer printers""",
    "sportswear": """trainers sneakers sportswear kit boots""",
    "clothes": """jeans hoodie hoodies jacket jackets dress dresses shirt shirts clothes
        clothing outfit outfits sale fitting""",
    "pharmacy": """prescription prescriptions pharmacy pharmacist chemist meal deal
        skincare makeup""",
    "sandwiches": """sandwich sandwiches footlong sub subs""",
    "cosmetics": """soap soaps bath bomb bombs shampoo skincare cosmetics""",
    "trains": """train trains flight flights fare fares cancelled delayed""",
    "films": """film films movie movies comic comics superhero studio studios""",
    "party": """seat seats vote votes voted voters voting election elections elected
        council councils manifesto party polls poll parliament mp mps government
        minister ministers campaign campaigned coalition pledged promised opposition""",
}
_BY_TRADE = {
    "chase": "bank payments",
    "visa": "payments",
    "orange": "telecom",
    "sky": "broadcast telecom",
    "amazon": "shop",
    "target": "shop",
    "zara": "shop",
    "shell": "fuel",
    "ford": "cars",
    "tesla": "cars",
    "kia": "cars",
    "apple": "computers",
    "oracle": "computers",
    "dell": "computers",
    "canon": "cameras",
    "puma": "sportswear",
    "gap": "clothes",
    "mango": "clothes",
    "boots": "pharmacy",
    "subway": "sandwiches",
    "lush": "cosmetics",
    "virgin": "trains telecom broadcast",
    "halifax": "bank",
    "nationwide": "bank",
    "marvel": "films",
    "labour": "party",
    "greens": "party",
    "tories": "party",
    "conservatives": "party",
    "democrats": "party",
    "republicans": "party",
    "liberals": "party",
}
TRADES = {
    name: frozenset(w for trade in trades.split() for w in _TRADES[trade].split())
    for name, trades in _BY_TRADE.items()
}
"""Each such name's normal form, with the words of its trade."""
_WORD = re.compile(r"[\w'-]+")


def of_its_trade(name: str, text: str) -> bool:
    """Whether ``text`` speaks of the trade of ``name``, an organisation whose name is as
    often something else (:data:`TRADES`)."""
    trade = TRADES.get(name)
    return trade is not None and not trade.isdisjoint(_WORD.findall(text.casefold()))
