"""Places every reader knows by name: the world's countries, its continents and oceans,
the states of the United States, and the world's capitals and large cities, in their
usual English forms (and a city's own, with and without its accents).

A name no cue of :mod:`engram.core.graph.entity_types` types is read as a ``place`` when it
is one of these ("Japan was lovely", "we drove through Nevada"), where it would otherwise
take a person's shape. Normal forms (:func:`engram.core.graph.names.normalise`). Left out:
the names that are people's given names or surnames, or English words, as often
("Jordan", "Chad", "Georgia", "Virginia", "Washington", "Montana", "Paris", "Sydney",
"Florence", "Victoria", "Lima", "Sofia", "Milan", "Santiago", "Kobe", "Medina",
"Houston", "Reading", "Nice", "Mobile", "Male"), which keep the cues of their sentence.
Written from general knowledge, not read off any labelled text.
"""

from __future__ import annotations

import re

_ONE_WORD = """
afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan
bahamas bahrain bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia
botswana brazil brunei bulgaria burundi cambodia cameroon canada chile china colombia
comoros congo croatia cuba cyprus czechia denmark djibouti ecuador egypt eritrea estonia
eswatini ethiopia fiji finland france gabon gambia germany ghana greece grenada guatemala
guinea guinea-bissau guyana haiti honduras hungary iceland india indonesia iran iraq
ireland italy jamaica japan kazakhstan kenya kiribati korea kosovo kuwait kyrgyzstan laos
latvia lebanon lesotho liberia libya liechtenstein lithuania luxembourg madagascar malawi
malaysia maldives mali malta mauritania mauritius mexico micronesia moldova monaco
mongolia montenegro morocco mozambique myanmar burma namibia nauru nepal netherlands
holland nicaragua niger nigeria norway oman pakistan palau palestine panama paraguay peru
philippines poland portugal qatar romania russia rwanda samoa senegal serbia seychelles
singapore slovakia slovenia somalia spain sudan suriname sweden switzerland syria taiwan
tajikistan tanzania thailand timor-leste togo tonga tunisia turkey turkmenistan tuvalu
uganda ukraine britain england scotland wales america uruguay uzbekistan vanuatu
venezuela vietnam yemen zambia zimbabwe greenland macau
africa antarctica asia europe oceania
alabama alaska arizona arkansas california colorado connecticut delaware florida hawaii
idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts
michigan minnesota mississippi missouri nebraska nevada ohio oklahoma oregon pennsylvania
tennessee texas utah vermont wisconsin wyoming
us uk usa uae
london manchester birmingham liverpool leeds glasgow edinburgh cardiff belfast dublin cork
galway bristol newcastle sheffield oxford cambridge aberdeen brighton nottingham
leicester southampton lisbon porto rome madrid barcelona seville sevilla bilbao malaga málaga
granada marseille lyon toulouse bordeaux lille nantes strasbourg rennes montpellier
brussels antwerp ghent amsterdam rotterdam utrecht eindhoven berlin hamburg munich
münchen cologne köln frankfurt stuttgart düsseldorf dusseldorf leipzig dresden hanover
hannover nuremberg bremen vienna salzburg graz zurich zürich basel bern lausanne
turin naples napoli venice bologna palermo verona genoa pisa copenhagen aarhus
stockholm gothenburg malmö malmo oslo bergen trondheim helsinki tampere reykjavik
reykjavík warsaw kraków krakow wrocław wroclaw gdańsk gdansk poznań poznan łódź lodz
prague brno bratislava budapest bucharest cluj belgrade zagreb ljubljana sarajevo
skopje tirana podgorica athens thessaloniki istanbul ankara izmir kyiv kiev kharkiv lviv
odesa odessa minsk vilnius kaunas riga tallinn chisinau moscow tbilisi yerevan baku
almaty astana tashkent bishkek dushanbe ashgabat tehran isfahan shiraz baghdad basra
erbil damascus aleppo beirut amman jerusalem haifa riyadh jeddah mecca dubai doha
muscat manama cairo luxor giza tunis algiers oran casablanca marrakech
marrakesh rabat fez tangier tripoli benghazi khartoum nairobi mombasa kampala kigali
dodoma zanzibar lagos abuja ibadan kano accra kumasi dakar bamako abidjan ouagadougou
niamey lomé lome cotonou yaoundé yaounde douala kinshasa brazzaville luanda lusaka harare
bulawayo maputo windhoek gaborone johannesburg pretoria durban soweto antananarivo
mogadishu djibouti asmara kabul kandahar islamabad karachi lahore peshawar delhi mumbai
bombay kolkata calcutta chennai madras bangalore bengaluru hyderabad pune ahmedabad
jaipur lucknow kochi goa mysuru mysore kathmandu thimphu dhaka chittagong colombo kandy
beijing shanghai guangzhou shenzhen chengdu chongqing wuhan xi'an hangzhou nanjing
tianjin suzhou harbin kunming lhasa macao taipei kaohsiung seoul busan incheon daegu
pyongyang tokyo osaka kyoto yokohama nagoya sapporo fukuoka hiroshima okinawa
ulaanbaatar hanoi saigon danang bangkok phuket pattaya yangon mandalay vientiane
manila cebu davao jakarta bali bandung surabaya yogyakarta singapore perth melbourne
brisbane canberra hobart auckland christchurch queenstown suva toronto montreal montréal
vancouver calgary edmonton ottawa winnipeg halifax quebec québec havana nassau
mexico guadalajara monterrey tijuana cancún cancun oaxaca puebla tegucigalpa managua
bogotá bogota medellín medellin cali cartagena caracas maracaibo quito guayaquil
cusco cuzco arequipa valparaíso valparaiso montevideo
asunción asuncion brasília brasilia recife fortaleza manaus belém curitiba
chicago boston seattle atlanta miami philadelphia detroit baltimore pittsburgh
portland minneapolis milwaukee nashville memphis sacramento tucson albuquerque honolulu
anchorage manhattan harlem oakland berkeley
"""
# One name a line or between bars.
_WHOLE = """
antigua and barbuda | bosnia and herzegovina | burkina faso | cape verde
central african republic | costa rica | czech republic | dominican republic | el salvador
equatorial guinea | ivory coast | new zealand | north korea | north macedonia
papua new guinea | san marino | saudi arabia | sierra leone | solomon islands
south africa | south korea | south sudan | sri lanka | trinidad and tobago | east timor
united arab emirates | united kingdom | great britain | northern ireland | united states
vatican city | puerto rico | hong kong | north america | south america | latin america
middle east | new hampshire | new jersey | new mexico | new york | north carolina
north dakota | rhode island | south carolina | south dakota | west virginia
pacific ocean | atlantic ocean | indian ocean | arctic ocean | southern ocean
new delhi | mexico city | buenos aires | são paulo | sao paulo | rio de janeiro
belo horizonte | porto alegre | la paz | santa cruz | panama city | guatemala city
san josé | san jose | san juan | santo domingo | port-au-prince | kuala lumpur
ho chi minh city | phnom penh | addis ababa | dar es salaam | cape town | port elizabeth
tel aviv | abu dhabi | kuwait city | st petersburg | st. petersburg | saint petersburg
los angeles | san francisco | san diego | las vegas | new orleans | salt lake city
san antonio | el paso | fort worth | kansas city | st louis | st. louis | quebec city
the hague | den haag | rio grande | hong kong island | tel aviv-yafo | sharm el-sheikh
"""
KNOWN = frozenset(_ONE_WORD.split()) | frozenset(
    " ".join(name.split()) for name in re.split(r"[|\n]", _WHOLE) if name.strip()
)
"""Every known place's normal form."""
# Read in lowercase too, as chat writes them ("landed in cebu", "back from lisbon"): the
# one-word names but those that are English words as often.
IN_LOWERCASE = frozenset(_ONE_WORD.split()) - frozenset(
    "us turkey chile china guinea niger japan cork fez".split()
)

# Words that end a place's name ("Kestrel Hall", "Elm Street"), each a kind of place.
PLACE_WORDS = frozenset(
    """street st road rd avenue ave boulevard lane square park lake river mountain
    mountains mount mt beach island islands bay valley county city town village state
    province region canyon forest falls desert coast harbor harbour peninsula airport
    station theatre theater teatr teatro cafe café bridge plaza market cathedral palace
    castle tower rue calle via piazza platz strasse straße grove terrace mews wharf quay
    embankment promenade esplanade gardens heights gare bahnhof estación estacion
    stazione stadium arena ballpark hall centre center pavilion auditorium""".split()
)
