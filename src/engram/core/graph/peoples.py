"""Peoples and languages every reader knows by name: nationalities, peoples and faiths
(a ``group``), and the languages widely spoken or taught (a ``language``).

A capitalised word with no cue takes a person's shape (:mod:`engram.core.graph.entity_types`),
which these never are: "a Mexican architect", "Sikh volunteers", "Yoruba families",
"Interpreter needed: Yoruba and Hausa". A word that names both a people and its
language ("Korean", "Yoruba") is a ``language`` after a language's cue ("translates
Korean novels", "learning Yoruba") and a ``group`` otherwise. Normal forms
(:func:`engram.core.graph.names.normalise`). Left out: the words that are given names or
surnames as often as peoples ("Christian", "Roma", "Lao"), and names of two words
but "Sri Lankan" and "South African".
Written from general knowledge, not read off any labelled text.
"""

from __future__ import annotations

_LANGUAGES = """
english spanish french german italian portuguese chinese mandarin cantonese japanese
korean arabic russian hindi urdu bengali dutch greek swedish norwegian danish finnish
polish turkish hebrew latin swahili vietnamese thai tagalog filipino persian farsi dari
ukrainian czech slovak slovenian croatian serbian bosnian bulgarian macedonian albanian
romanian hungarian estonian latvian lithuanian icelandic irish gaelic welsh catalan basque
galician armenian georgian azerbaijani kazakh uzbek mongolian tibetan uyghur punjabi
gujarati marathi tamil telugu kannada malayalam sinhala nepali pashto kurdish amharic
tigrinya somali yoruba igbo hausa zulu xhosa afrikaans malay indonesian javanese burmese
khmer maori samoan hawaiian quechua guarani yiddish esperanto sanskrit creole
"""
_GROUPS = """
american canadian mexican brazilian argentine argentinian chilean colombian peruvian
venezuelan cuban jamaican haitian dominican ecuadorian bolivian uruguayan paraguayan
guatemalan honduran salvadoran nicaraguan panamanian british scottish irish welsh english
french german italian spanish portuguese dutch belgian swiss austrian swedish norwegian
danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek turkish
russian ukrainian belarusian lithuanian latvian estonian serbian croatian bosnian
slovenian albanian macedonian montenegrin moldovan georgian armenian azerbaijani israeli
palestinian lebanese syrian iraqi iranian persian afghan pakistani indian bangladeshi
nepali nepalese tibetan chinese japanese korean taiwanese mongolian vietnamese
thai cambodian laotian burmese filipino indonesian malaysian singaporean australian kiwi
nigerian ghanaian kenyan ethiopian eritrean somali sudanese egyptian moroccan algerian
tunisian libyan senegalese malian ugandan tanzanian rwandan congolese cameroonian
zimbabwean zambian angolan mozambican namibian saudi emirati qatari kuwaiti
omani yemeni jordanian kazakh uzbek tajik kyrgyz turkmen kurdish arab arabs berber
yoruba igbo hausa zulu xhosa maasai amhara tigrayan maori samoan hawaiian inuit cherokee
navajo sioux latino latinx hispanic asian african european caribbean
scandinavian slavic balkan nordic punjabi gujarati tamil bengali sikh sikhs hindu hindus
muslim muslims christians jewish jews catholic catholics protestant buddhist
buddhists orthodox mormon quaker amish
"""
LANGUAGES = frozenset(_LANGUAGES.split())
"""Every known language's normal form."""
GROUPS = frozenset(_GROUPS.split()) | frozenset({"sri lankan", "south african"})
"""Every known nationality's, people's and faith's normal form."""
