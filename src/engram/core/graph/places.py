"""Places every reader knows by name: the world's countries, its continents and oceans,
and the states of the United States, in their usual English forms.

A name no cue of :mod:`engram.core.graph.entity_types` types is read as a ``place`` when it
is one of these ("Japan was lovely", "we drove through Nevada"), where it would otherwise
take a person's shape. Normal forms (:func:`engram.core.graph.names.normalise`). Left out:
the names that are people's given names as often ("Jordan", "Chad", "Georgia",
"Virginia", "Washington", "Montana"), which keep the cues of their sentence. Written from
general knowledge, not read off any labelled text.
"""

from __future__ import annotations

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
"""
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
"""
KNOWN = frozenset(_ONE_WORD.split()) | frozenset(
    " ".join(name.split()) for name in _WHOLE.split("|")
)
"""Every known place's normal form."""
